from ari_mem_tui.cli import main

raise SystemExit(main())
