"""``python -m respload ...``: the respload command line (see :mod:`respload.cli`)."""

from respload.cli import console_main

if __name__ == "__main__":
    console_main()
