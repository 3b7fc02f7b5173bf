"""python3 -m calibration.capture ...: capture.py's command line."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture  # noqa: E402

sys.exit(capture.main())
