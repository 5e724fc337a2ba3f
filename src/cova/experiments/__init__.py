"""Paper figures and tables from scored runs.

:mod:`.registry` maps each renderer name of the configuration to its function; :mod:`.common` holds what the
renderers share (run loading, score records, the paper's numbers beside ours, tables); :mod:`.generic` the
renderers any paper uses; :mod:`.cova` and :mod:`.nerv` those of one paper each; :mod:`.reference` the numbers
the papers print. Renderers assemble data and call :mod:`cova.viz` to draw it.
"""
