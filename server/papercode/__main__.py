"""`python -m papercode`: the command line, started as the `papercode` script starts it (`cli.entry`)."""

from papercode.cli.entry import main

raise SystemExit(main())
