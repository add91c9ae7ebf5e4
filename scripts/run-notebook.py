"""Execute a notebook top to bottom with nbclient (as CI does); fail on the first error.

    python scripts/run-notebook.py examples/notebooks/quickstart.ipynb
    python scripts/run-notebook.py --write examples/notebooks/*.ipynb   # `make notebooks`

Also fails when no plot was drawn, or when a notebook that runs workloads (it calls
``respload.run``) showed no live progress display updated while it ran (a display_data
output of ``respload-progress`` followed by update_display_data messages), or when one that
compares reports (it calls ``respload.compare``) displayed no comparison table.

Without ``--write`` the notebook file is not modified (`make test` re-executes the committed
notebooks and does not compare their outputs, which differ from run to run). With it, a
notebook that passed every check is saved with its outputs, so that GitHub shows its plots and
tables; the execution counts and the kernel's timestamps are left out, so that a refresh
changes only what the run changed.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import nbclient
import nbformat

LIVE_DISPLAY = 'class="respload-progress"'
COMPARISON = 'class="respload-comparison"'


class Client(nbclient.NotebookClient):
    """Counts the live progress display's messages as the kernel sends them (nbclient
    applies update_display_data to the output it updates, so the saved notebook keeps only
    the last state)."""

    shown = 0
    updated = 0

    def process_message(self, msg: dict[str, Any], cell: Any, cell_index: int) -> Any:
        kind = msg["msg_type"]
        html = msg.get("content", {}).get("data", {}).get("text/html", "")
        if LIVE_DISPLAY in html:
            if kind == "display_data":
                self.shown += 1
            elif kind == "update_display_data":
                self.updated += 1
        return super().process_message(msg, cell, cell_index)


def saved(nb: Any) -> Any:
    """``nb`` without what changes on every run but says nothing: execution counts and the
    cells' execution timestamps."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.execution_count = None
            cell.metadata.pop("execution", None)
            for out in cell.get("outputs", []):
                if "execution_count" in out:
                    out["execution_count"] = None
    return nb


def main() -> None:
    args = sys.argv[1:]
    write = "--write" in args
    for path in [a for a in args if a != "--write"]:
        started = time.monotonic()
        nb = nbformat.read(path, as_version=4)
        client = Client(nb, timeout=300, kernel_name="python3")
        client.execute()
        outputs = [out for cell in nb.cells for out in cell.get("outputs", [])]
        images = sum(1 for out in outputs if "image/png" in out.get("data", {}))
        errors = [out for out in outputs if out.get("output_type") == "error"]
        tables = sum(1 for out in outputs if COMPARISON in out.get("data", {}).get("text/html", ""))
        print(
            f"{path}: {len(nb.cells)} cells executed, {images} images, "
            f"{client.shown} live displays updated {client.updated} times, "
            f"{tables} comparisons, "
            f"{time.monotonic() - started:.1f} s"
        )
        if errors:
            raise SystemExit(f"{path}: a cell failed: {errors[0].get('ename')}")
        if images == 0:
            raise SystemExit(f"{path}: no plot was drawn")
        runs = any("respload.run(" in "".join(c.source) for c in nb.cells)
        if runs and (client.shown == 0 or client.updated == 0):
            raise SystemExit(f"{path}: no live progress display was shown and updated")
        # The saved display holds the run's final state: every phase done.
        final = [
            out["data"]["text/html"]
            for out in outputs
            if out.get("output_type") == "display_data"
            and LIVE_DISPLAY in out.get("data", {}).get("text/html", "")
        ]
        if runs and not all(">done<" in h and ">running<" not in h for h in final):
            raise SystemExit(f"{path}: a live progress display did not end with its run")
        compares = any("respload.compare(" in "".join(c.source) for c in nb.cells)
        if compares and tables == 0:
            raise SystemExit(f"{path}: no comparison of reports was displayed")
        if write:
            nbformat.write(saved(nb), path)
            print(f"{path}: saved with its outputs")


if __name__ == "__main__":
    main()
