from deflectbench.cli import main

main()
