"""Entry point of a local-executor worker process: ``python -m curator.executors._worker FD``.

A fresh interpreter that never imports the user's ``__main__`` (see ``process_worker.ProcessWorker``).
"""

import sys

from curator.executors.process_worker import child_main

__all__: list[str] = []

if __name__ == "__main__":
    child_main(int(sys.argv[1]))
