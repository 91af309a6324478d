"""``python -m llama_kb`` runs the CLI."""

import sys

from llama_kb.cli import main

sys.exit(main())
