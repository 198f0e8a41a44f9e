"""``simulate``'s samples on the command line: a file drawn already (``--sampled``), a sample the reader
drew (its left-out operations, and a refusal recounted over every key), a rate too coarse for -m refused."""

from __future__ import annotations

from slabcalc.cli.errors import Refusal
from slabcalc.errors import InputError


def drawn_rate(sample, sampled, curve: bool, settings) -> tuple[bool, float | None]:
    """Whether the file is a sample drawn already (``--sampled``), and the rate to scale by."""
    if (sample is not None or sampled is not None) and settings.extstore is not None:
        raise Refusal("simulate --sample does not model -o ext_path: replay the whole workload")
    if sampled is None:
        return False, sample
    if sample is not None or curve:
        raise Refusal("--sampled replays a sample drawn already, at one -m: not with --sample, a list of -m "
                      "or --target-hit-ratio")
    return True, sampled


def reader_left_out(accounting, drawn: bool = False) -> dict:
    """When the reader drew the sample as it read (``accounting.sample``), how many operations it left out
    and how many gets among them (``simulate``'s ``left_out`` and ``left_out_gets``); for a sample drawn
    before (``drawn``), the operations and gets of the log it was drawn from, when its rows state them
    (``log_ops``, ``log_gets``: ``simulate``'s ``log``)."""
    if drawn:
        return {"log": lambda ops, gets: drawn_log(accounting, ops, gets)}
    if accounting.sample is None:
        return {}
    return {"left_out": lambda: accounting.left_out, "left_out_gets": lambda: accounting.left_out_gets}


def drawn_log(accounting, ops: int, gets: int) -> tuple[int, int] | None:
    """The operations and gets of the log a sample drawn before was drawn from, as its rows state them
    (None when they do not), once its own ``ops`` and ``gets`` are read: a log of fewer than its sample
    is an InputError naming the file and the counts (they are another log's, or edited)."""
    if accounting.log_ops is None:
        return None
    if accounting.log_ops < ops or accounting.log_gets < gets:
        raise InputError(f"{accounting.source}: log_ops {accounting.log_ops}, log_gets {accounting.log_gets}: fewer "
                         f"than the sample's own {ops} operations and {gets} gets; they are not the counts of the "
                         f"log it was drawn from")
    return accounting.log_ops, accounting.log_gets


def recount_coarse(file, settings, accounting, input_format, key_length, time_zero):
    """Where the reader drew the sample (it saw the sampled keys' items only), the refusal of a rate too
    coarse for -m read again over every key's items, so that the smallest rate it names counts every
    class the workload uses (a larger sample may meet one the smaller missed); None for standard input."""
    if accounting.sample is None or file == "-":
        return None

    def recount() -> str:
        from slabcalc.engines.sample import TooCoarse, room_for
        from slabcalc.inputs import open_workload

        with open_workload(file, input_format=input_format, key_length=key_length, key_max=settings.profile.key_max,
                           time_zero=time_zero) as (ops, _):
            try:
                room_for(settings, ops, accounting.sample).check()
            except TooCoarse as exc:
                return str(exc)
        return ""
    return recount


def refusing_coarse(run, recount=None):
    """``run`` with a sample rate too small for -m (``TooCoarse``) a usage error: one line, exit 2
    (``recount``: the refusal over every key, when ``run`` saw only the sample's)."""
    from slabcalc.engines.sample import TooCoarse

    def refusing(ops):
        try:
            return run(ops)
        except TooCoarse as exc:
            raise Refusal((recount() if recount is not None else "") or str(exc)) from None
    return refusing
