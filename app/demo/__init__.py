"""The bundled demo sessions and the script that writes them (`python -m dsh_inspect.demo.generate`)."""
