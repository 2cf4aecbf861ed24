-- wrk: POST /embed with one text of 32 tokens (for the demo vocabulary).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"inputs": "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat near the door and the bird sings a song in the tall tree"}'
