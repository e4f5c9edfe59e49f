#!/usr/bin/env python
import sys

if __name__ == "__main__":
    from config.cli import main

    sys.exit(main())
