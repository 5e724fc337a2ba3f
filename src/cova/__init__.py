"""cova: structure-controlled data visualization (COVA and related methods).

Data flows one way: ``datasets`` -> ``affinity``/``cohorts`` -> ``methods`` -> ``metrics`` -> ``viz``;
``experiments`` is the only module that knows about paper numbering.
"""

__version__ = "0.1.0"
