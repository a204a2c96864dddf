import httpx
from django.core.wsgi import get_wsgi_application
from django.db import connection
from memoryweb.client import MemoryWeb
from memory.models import Note

def test_probe(api_key, subject):
    mw = MemoryWeb("http://testserver", api_key, transport=httpx.WSGITransport(app=get_wsgi_application()))
    n = mw.note_store("alice", "Alice's cat is called Miso")
    print(connection.in_atomic_block, connection.needs_rollback, connection.closed_in_transaction, connection.connection)
    print(Note.objects.count())
    from django.core.signals import request_finished
    print(request_finished.receivers)
