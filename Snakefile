# Reproduction pipeline for structure-controlled data visualization (COVA and related papers).
#   snakemake --cores 16                                  full reproduction (config.yaml)
#   snakemake --cores all --configfile config/demo.yaml   offline demo
#   snakemake --report results/report.html                HTML report of every figure and table
# Rules are thin: each calls one step of the `cova` package (python -m cova <step>); the Plan in
# cova.config maps config entries to wildcard values and output paths.

import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path

from cova.config import SCORECARD_OUTPUTS, Plan, read_config_file, resolve_config, validate_config
from cova.io import OUTPUT_FOLDERS, TEMP_DIR, FileError, require_writable

# config.yaml is the default: `--config key=value` alone changes it, a --configfile replaces it (an overlay such as
# config/ci.yaml names config.yaml as its base). Reading it first makes a YAML error name the file and line.
if not workflow.overwrite_configfiles:
    read_config_file("config.yaml")

    configfile: "config.yaml"


# An overlay (e.g. config/ci.yaml: `overlay: {base: config.yaml}` plus what differs) becomes the full config here,
# in place, so that the rules and `snakemake --report` see the resolved config.
_resolved = resolve_config(dict(config), workflow.basedir)
config.clear()
config.update(_resolved)


envvars:
    "PATH",


validate_config(config, Path(workflow.basedir, "workflow", "schemas", "config.schema.yaml"))
PLAN = Plan(config)
# The output folders must be writable before any job starts: one message naming the folder, not the scheduler's
# traceback when the first job writes (cova.io.require_writable).
try:
    require_writable(OUTPUT_FOLDERS)
except FileError as err:
    sys.exit(f"Error: {err}")
for notice in PLAN.notices:  # e.g. Places2 features not supplied: the stand-in runs instead
    print(notice, file=sys.stderr)
# Jobs run `python -m cova ...` with the interpreter that runs Snakemake (e.g. .venv/bin), unless a
# --sdm conda environment puts its own python first.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/inputs.smk"
include: "workflow/rules/methods.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/paper.smk"
include: "workflow/rules/studies.smk"
include: "workflow/rules/benchmarks.smk"
include: "workflow/rules/export.smk"


localrules:
    timing_plan,
    claims,


# The job server (cova.jobserver): local jobs run as children of one process that imported the package once.
# Cluster jobs run elsewhere, and jobs in a conda or container environment (--sdm) run that environment's own
# interpreter: both start their own; a job finding no server runs the step itself.
_JOB_SERVER = {}


onstart:
    from cova import jobserver

    if (
        config.get("job_server", True)
        and workflow.local_exec
        and not workflow.deployment_settings.deployment_method
        and not os.environ.get(jobserver.ENV)
    ):
        _JOB_SERVER["path"], _JOB_SERVER["proc"] = jobserver.start(TEMP_DIR)
        os.environ[jobserver.ENV] = _JOB_SERVER["path"]


onsuccess:
    if _JOB_SERVER:
        from cova import jobserver

        jobserver.stop(_JOB_SERVER["path"], _JOB_SERVER["proc"])


onerror:
    if _JOB_SERVER:
        from cova import jobserver

        jobserver.stop(_JOB_SERVER["path"], _JOB_SERVER["proc"])


rule all:
    default_target: True
    input:
        PLAN.all_targets(),
