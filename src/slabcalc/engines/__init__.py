"""The replay engine of ``slabcalc simulate``: memcached's memory on a workload's clock.

One module per piece of the server, each citing the 1.6.18 source it follows:

``slabs``       pages, each class's free list (a stack), the global page pool
``lru``         items, the HOT/WARM/COLD LRUs, ``lru_pull_tail``, ``do_item_alloc_pull``
``engine``      the op loop: sets, gets, deletes, touches; the clock; results
``maintainer``  the LRU maintainer thread's schedule and juggle
``crawler``     the LRU crawler's auto-expiry schedule and crawl
``automove``    ``slab_automove=1`` (windowed) and ``=2`` (a page per eviction)
``mover``       the page mover (``slab_rebalance_*``)
``background``  which of these run, from the profile's ``background`` data and ``-o``
``results``     the values a replay ends with; ``findings``: calcification

Nothing here knows the command line; :mod:`slabcalc.engines.simulate` is the library face.
"""
