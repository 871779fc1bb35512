from kbc.cli.main import main

main()
