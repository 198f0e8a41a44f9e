# The C types of key_scan.py for Cython (setup.py compiles it where Cython and a C compiler are present;
# its source stays plain Python).  u32 arithmetic wraps mod 2^32 as the source's masks do.  The helpers of
# an MD5 are inline (a row's MD5 22 % cheaper; Cython warns that a declaration should not be inline, and
# heeds it).
import cython

ctypedef unsigned int u32

cdef extern from *:
    """
    #define SLABCALC_U32_MASK 0xFFFFFFFFu
    """
    const unsigned int _M "SLABCALC_U32_MASK"     # key_scan.py's _M, a constant the compiler folds

cdef u32 _f(u32 b, u32 c, u32 d) noexcept
cdef u32 _g(u32 b, u32 c, u32 d) noexcept
cdef u32 _h(u32 b, u32 c, u32 d) noexcept
cdef u32 _i(u32 b, u32 c, u32 d) noexcept

@cython.locals(t=u32)
cdef u32 _step(u32 a, u32 b, u32 f, u32 x, u32 k, int s) noexcept

cdef inline u32 _byte(bytes data, Py_ssize_t begin, Py_ssize_t length, Py_ssize_t padded,
               Py_ssize_t j) noexcept

@cython.locals(at=Py_ssize_t)
cdef inline u32 _word(bytes data, Py_ssize_t begin, Py_ssize_t length, Py_ssize_t padded,
               Py_ssize_t j) noexcept

@cython.locals(padded0=Py_ssize_t, padded1=Py_ssize_t, o=Py_ssize_t, h0=u32, h1=u32, h2=u32, h3=u32, e0=u32, e1=u32,
               e2=u32, e3=u32, a0=u32, b0=u32, c0=u32, d0=u32, a1=u32, b1=u32, c1=u32, d1=u32)
cdef inline (u32, u32) _md5_heads(bytes data, Py_ssize_t k0, Py_ssize_t n0, Py_ssize_t k1, Py_ssize_t n1) noexcept

cdef inline u32 _head(u32 h0) noexcept

@cython.locals(x0=u32, x1=u32, x2=u32, x3=u32, x4=u32, x5=u32, x6=u32, x7=u32, x8=u32, x9=u32, x10=u32, x11=u32,
               x12=u32, x13=u32, x14=u32, x15=u32,
               y0=u32, y1=u32, y2=u32, y3=u32, y4=u32, y5=u32, y6=u32, y7=u32, y8=u32, y9=u32, y10=u32, y11=u32,
               y12=u32, y13=u32, y14=u32, y15=u32)
cdef inline (u32, u32, u32, u32, u32, u32, u32, u32) _rounds(
    u32 a0, u32 b0, u32 c0, u32 d0, u32 a1, u32 b1, u32 c1, u32 d1, bytes data,
    Py_ssize_t k0, Py_ssize_t n0, Py_ssize_t padded0, Py_ssize_t o0, Py_ssize_t k1, Py_ssize_t n1,
    Py_ssize_t padded1, Py_ssize_t o1) noexcept

cdef inline (u32, u32, u32, u32, u32, u32, u32, u32) _rounds_12(
    u32 a0, u32 b0, u32 c0, u32 d0, u32 a1, u32 b1, u32 c1, u32 d1,
    u32 x0, u32 x1, u32 x2, u32 x3, u32 x4, u32 x5, u32 x6, u32 x7,
    u32 x8, u32 x9, u32 x10, u32 x11, u32 x12, u32 x13, u32 x14, u32 x15,
    u32 y0, u32 y1, u32 y2, u32 y3, u32 y4, u32 y5, u32 y6, u32 y7,
    u32 y8, u32 y9, u32 y10, u32 y11, u32 y12, u32 y13, u32 y14, u32 y15) noexcept

cdef inline (u32, u32, u32, u32, u32, u32, u32, u32) _rounds_34(
    u32 a0, u32 b0, u32 c0, u32 d0, u32 a1, u32 b1, u32 c1, u32 d1,
    u32 x0, u32 x1, u32 x2, u32 x3, u32 x4, u32 x5, u32 x6, u32 x7,
    u32 x8, u32 x9, u32 x10, u32 x11, u32 x12, u32 x13, u32 x14, u32 x15,
    u32 y0, u32 y1, u32 y2, u32 y3, u32 y4, u32 y5, u32 y6, u32 y7,
    u32 y8, u32 y9, u32 y10, u32 y11, u32 y12, u32 y13, u32 y14, u32 y15) noexcept

@cython.locals(size=Py_ssize_t, last=Py_ssize_t, s=Py_ssize_t, line=Py_ssize_t, left_out=Py_ssize_t,
               gets=Py_ssize_t, waiting=Py_ssize_t, w_s=Py_ssize_t, w_e=Py_ssize_t, w_kb=Py_ssize_t,
               w_ke=Py_ssize_t, w_ob=Py_ssize_t, w_oe=Py_ssize_t, e=Py_ssize_t, kb=Py_ssize_t, ke=Py_ssize_t,
               ob=Py_ssize_t, oe=Py_ssize_t, told=int, heads=(u32, u32))
cpdef tuple scan(bytes data, int delimiter, Py_ssize_t i_key, Py_ssize_t i_op,
                 unsigned long long limit, list rows, list bounds)

@cython.locals(kb=Py_ssize_t, ke=Py_ssize_t, ob=Py_ssize_t, oe=Py_ssize_t, key_cut=cython.bint, cell=Py_ssize_t,
               cb=Py_ssize_t, e=Py_ssize_t, c=cython.uchar)
cdef inline (Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t, Py_ssize_t) _cells(bytes data, Py_ssize_t s,
    int delimiter, Py_ssize_t i_key, Py_ssize_t i_op, Py_ssize_t last) noexcept

@cython.locals(n=Py_ssize_t)
cdef inline int _told(bytes data, list rows, list bounds, Py_ssize_t line, Py_ssize_t s, Py_ssize_t e,
                      bint keep, Py_ssize_t ob, Py_ssize_t oe) except -1
