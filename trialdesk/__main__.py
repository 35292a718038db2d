from trialdesk.cli import main

raise SystemExit(main())
