import os
import sys

from .jobserver import ENV, run_remote

# With a job server (cova.jobserver) the step runs in a child of the server, which has imported the package once.
_status = run_remote(os.environ[ENV], sys.argv[1:]) if os.environ.get(ENV) else None
if _status is None:
    from .cli import main

    _status = main()
sys.exit(_status)
