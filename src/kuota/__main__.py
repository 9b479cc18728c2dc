from kuota.cli.main import main

main(prog_name="kuota")
