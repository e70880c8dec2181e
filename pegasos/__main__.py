"""``python -m pegasos``: the ``pegasos`` command, for environments whose scripts directory is not on PATH."""
from pegasos.cli import main

if __name__ == "__main__":
    main(prog_name="pegasos")
