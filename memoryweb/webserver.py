"""The web server: daphne, with HTTP channels that answer an oversized request head instead of
dropping the connection. `manage.py runall` starts it as `python -m memoryweb.webserver`, which
takes daphne's own arguments.

Twisted reads the request line and headers with LineReceiver: a line over `MAX_LENGTH` (16 KB)
goes to `lineLengthExceeded()`, which closes the connection without a word, and a head over
`totalHeadersSize` gets a bare 400. Here a request line that is too long is a 414 and headers
that are too long a 431, each with the API's JSON error envelope, and the connection closes.
"""

import json

from daphne import http_protocol, server
from daphne.cli import CommandLineInterface
from twisted.web import http

from memoryweb.errors import error_body

_REASONS = {414: b"URI Too Long", 431: b"Request Header Fields Too Large"}


class HTTPChannel(http.HTTPChannel):
    def lineReceived(self, line):
        if self._receivedHeaderSize + len(line) > self.totalHeadersSize:
            return self._refuse_head()
        return super().lineReceived(line)

    def lineLengthExceeded(self, line):
        return self._refuse_head()

    def _refuse_head(self):
        # no line of this request counted yet: it is the request line that is too long
        if self._receivedHeaderSize == 0:
            status, code, what = 414, "uri_too_long", "the request line"
        else:
            status, code, what = 431, "headers_too_large", "the request headers"
        message = f"{what} is over {self.totalHeadersSize} bytes"
        body = json.dumps(error_body(code, message)).encode()
        self.transport.write(
            b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
            b"Connection: close\r\n\r\n%s" % (status, _REASONS[status], len(body), body)
        )
        self.loseConnection()


class HTTPFactory(http_protocol.HTTPFactory):
    def protocol(self):
        # what twisted's HTTPFactory.protocol builds, around our channel
        return http._GenericHTTPChannelProtocol(HTTPChannel())


class Server(server.Server):
    """daphne's Server; `run()` makes its HTTPFactory, and the setter swaps in ours."""

    @property
    def http_factory(self):
        return self._http_factory

    @http_factory.setter
    def http_factory(self, factory):
        self._http_factory = factory if isinstance(factory, HTTPFactory) else HTTPFactory(self)


class WebServerCLI(CommandLineInterface):
    server_class = Server


if __name__ == "__main__":
    WebServerCLI.entrypoint()
