"""Workflow configuration: files and overlays (:mod:`.files`), the check before any job (:mod:`.checks`) and the
plan of outputs (:mod:`.plan`)."""

from .checks import COHORT_PARAMETERS, check_config_file, known_cohort_count, validate_config
from .files import PROJECT_ROOT, SCHEMA_PATH, ConfigError, load_schema, read_config_file, resolve_overlay
from .plan import (
    BENCHMARK_DIR,
    PAPER_GAPS_OUTPUTS,
    SCORECARD_OUTPUTS,
    TIMINGS_OUTPUTS,
    MethodJob,
    Plan,
    expand_grid,
    make_id,
    resolve_fallbacks,
)
from .studies import expand_studies, is_unlabelled, resolve_config, study_experiments

__all__ = ["BENCHMARK_DIR", "COHORT_PARAMETERS", "ConfigError", "MethodJob", "PAPER_GAPS_OUTPUTS", "PROJECT_ROOT", "SCORECARD_OUTPUTS",
           "Plan", "SCHEMA_PATH", "TIMINGS_OUTPUTS", "check_config_file", "expand_grid", "known_cohort_count",
           "load_schema", "make_id", "read_config_file", "resolve_fallbacks", "resolve_overlay", "validate_config",
           "expand_studies", "is_unlabelled", "resolve_config", "study_experiments"]
