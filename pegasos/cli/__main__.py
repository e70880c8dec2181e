"""``python -m pegasos.cli``: the ``pegasos`` command."""
from pegasos.cli import main

main()
