"""The bundled demo data root and the script that writes it (`python -m demo.make_demo`)."""
