"""The server side of the framework layer, above the sans-I/O core: composing servers
(`Server.mount`, `Server.import_server`) and deriving tools from tools
(`Server.add_transformed_tool`). Everything here works on registry snapshots at
registration time; the call path is the core's, unchanged. Nothing here is used by a
client; the client side of the framework layer is `mcpgen._client_side`."""
