"""The bundled demo sessions and the script that writes them (`python -m app.demo.generate`)."""
