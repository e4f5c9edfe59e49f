import sys

from nsmcore.cli import main

sys.exit(main())
