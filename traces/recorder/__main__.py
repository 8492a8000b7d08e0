"""Entry point: ``/usr/bin/python3 -m traces.recorder --help``."""
import sys

from .cli import main

sys.exit(main())
