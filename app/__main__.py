import sys

try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C while the modules still load: the same line `main` writes
    sys.stderr.write("\ndsh-inspect: interrupted\n")
    raise SystemExit(130) from None

raise SystemExit(main())
