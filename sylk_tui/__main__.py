import sys

from sylk_tui.cli import main

sys.exit(main())
