from papercode.cli.entry import main

raise SystemExit(main())
