"""The client side of the framework layer, above the connection: hooks around every
request a `Client` sends (`ClientMiddleware`) and the retry policy for idempotent
requests (`RetryPolicy`). Installed on a `Connection` only when configured: a client
without them sends each request through the connection's own coroutine, as before.
The server side of the framework layer is `mcpgen._server_side`."""
