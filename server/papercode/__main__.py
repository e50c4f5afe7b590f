from papercode.cli.main import main

raise SystemExit(main())
