# Helpers shared by the rules: wildcard constraints and the JSON handed to each step.


# Names are path components: never '.', '..' or anything else starting with a dot or a dash (the schema's $defs/name).
wildcard_constraints:
    dataset="[A-Za-z0-9_][A-Za-z0-9_.-]*",
    raw="[A-Za-z0-9_][A-Za-z0-9_.-]*",
    inputs_id="[A-Za-z0-9_][A-Za-z0-9_.-]*",
    method="[a-z0-9_]+",
    params_id="[A-Za-z0-9_][A-Za-z0-9_.-]*",
    posterior_id="class_posterior-[0-9a-f]+",


ENV = "../../environment.yml"


def as_json(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


#: Where the rules' argument files go (see args_file).
ARGS_DIR = "results/params"


def args_file(*lines):
    """The step arguments ``lines`` in a file, one per line, for ``--option @FILE`` (the steps read @FILE as
    argparse's fromfile arguments): the shell line stays short. The file is written when the job's parameters are
    evaluated and named by the digest of its content, so the rule's parameter (the path) changes whenever an
    argument does (Snakemake's params rerun trigger) and concurrent writers write the same bytes."""
    text = "".join(f"{line}\n" for line in lines)
    path = Path(ARGS_DIR, hashlib.sha256(text.encode()).hexdigest()[:16] + ".txt")
    if not path.exists() or path.read_text() != text:
        from cova.io import write_text_atomic  # the umask's permissions; a killed write's leftover removed

        write_text_atomic(path, text)
    return str(path)


def json_arg(obj):
    """``obj`` as a JSON argument in an :func:`args_file` (compact JSON: one line)."""
    return args_file(as_json(obj))


def config_files():
    """The configuration files of this run, relative to the workflow (config.yaml when none is given)."""
    files = [os.path.relpath(f, workflow.basedir) for f in workflow.configfiles]
    return ", ".join(files) or "config.yaml"


def digest(obj):
    """A short hash of ``obj`` as JSON: a rule parameter that changes when ``obj`` does."""
    return hashlib.sha256(as_json(obj).encode()).hexdigest()[:16]


def method_resource(name, default):
    def get(wildcards):
        return PLAN.method_job(wildcards.method, wildcards.params_id).resources.get(name, default)

    return get


def inputs_resource(name, default):
    def get(wildcards):
        return PLAN.inputs_resources(wildcards.inputs_id).get(name, default)

    return get


def posterior_input(wc):
    """The embed rule's class posterior: SNeRV's and PE's shared one (rule posterior's output), none for other
    methods."""
    posterior_id = PLAN.posterior_id(wc.method, wc.params_id)
    if posterior_id is None:
        return []
    return [rules.posterior.output[0].format(dataset=wc.dataset, inputs_id=wc.inputs_id, posterior_id=posterior_id)]


def write_json(path, obj):
    """Write ``obj`` as JSON to ``path`` atomically (a run: block's one line of logic)."""
    from cova.io import write_text_atomic

    write_text_atomic(path, json.dumps(obj, indent=1, sort_keys=True) + "\n")


def export_runs(dataset):
    """The runs of ``dataset`` in the plan as (inputs, method entry, name in the exported files); the name joins the
    entry and the inputs, e.g. ``tsne_points`` for obsm ``X_tsne_points``."""
    return [(inputs, entry, f"{entry}_{inputs}") for d, inputs, entry in PLAN.runs() if d == dataset]


def export_targets(datasets: list[str]) -> list[str]:
    """What ``export`` builds for ``datasets``: every run's ``embedding.csv`` and ``embedding.parquet`` beside its
    ``embedding.npz``, and one ``results/{dataset}/export/{dataset}.h5ad`` per dataset with runs."""
    unknown = [d for d in datasets if d not in config["datasets"]]
    if unknown:
        raise ValueError(
            f"export_targets: no datasets {unknown} in the configuration; it has {list(config['datasets'])}"
        )
    targets = []
    for dataset in datasets:
        runs = export_runs(dataset)
        for inputs, entry, _ in runs:
            targets += [PLAN.run_file(dataset, inputs, entry, f"embedding.{fmt}") for fmt in ("csv", "parquet")]
        if runs:
            targets.append(PLAN.export_h5ad(dataset))
    return targets
