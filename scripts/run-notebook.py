"""Execute a notebook top to bottom with nbclient (as CI does); fail on the first error.

    python scripts/run-notebook.py examples/notebooks/quickstart.ipynb

The notebook file is not modified: outputs stay out of the repository.
"""

from __future__ import annotations

import sys
import time

import nbclient
import nbformat


def main() -> None:
    for path in sys.argv[1:]:
        started = time.monotonic()
        nb = nbformat.read(path, as_version=4)
        nbclient.NotebookClient(nb, timeout=300, kernel_name="python3").execute()
        images = sum(
            1
            for cell in nb.cells
            for out in cell.get("outputs", [])
            if "image/png" in out.get("data", {})
        )
        print(
            f"{path}: {len(nb.cells)} cells executed, {images} images, "
            f"{time.monotonic() - started:.1f} s"
        )
        if images == 0:
            raise SystemExit(f"{path}: no plot was drawn")


if __name__ == "__main__":
    main()
