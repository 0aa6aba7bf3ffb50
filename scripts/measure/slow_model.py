#!/usr/bin/env python3
"""A scripted model for the measurements (OpenAI wire, not streaming): a build's first call runs
`sleep 30` in the sandbox and writes a page; once it has seen tool results it says it is done.
Usage: python3 slow_model.py [PORT]  (default 18097)"""
import sys
import http.server, json
PAGE = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n  <meta charset=\"utf-8\">\n  <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n  <title>Happy Paws</title>\n</head>\n<body>\n  <h1>Happy Paws dog walking</h1>\n  <p>We walk your dog every day.</p>\n</body>\n</html>\n"
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n=int(self.headers['content-length']); body=json.loads(self.rfile.read(n))
        msgs=body.get('messages',[]); has_tool=any(m.get('role')=='tool' for m in msgs)
        if has_tool:
            msg={"role":"assistant","content":"Done: the page is ready."}
        else:
            msg={"role":"assistant","content":None,"tool_calls":[{"id":"c0","type":"function","function":{"name":"runCommand","arguments":json.dumps({"command":"sleep","args":["30"]})}},{"id":"c1","type":"function","function":{"name":"createFile","arguments":json.dumps({"path":"index.html","content":PAGE})}}]}
        out={"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":msg,"finish_reason":"stop" if has_tool else "tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}
        b=json.dumps(out).encode(); self.send_response(200); self.send_header('content-type','application/json'); self.send_header('content-length',str(len(b))); self.end_headers(); self.wfile.write(b)
    def log_message(self,*a): pass
http.server.HTTPServer(('127.0.0.1',int(sys.argv[1]) if len(sys.argv)>1 else 18097),H).serve_forever()
