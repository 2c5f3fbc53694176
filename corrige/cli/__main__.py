from corrige.cli import app

app(prog_name="corrige")
