# Sourced by run.sh and crowd.sh: builds the five candidate servers into
# $out (set by the caller) from the prototypes beside this file, and
# for_each_library MEASURE: starts each in turn and calls MEASURE NAME PORT PID.
flags=(-O2 -std=c++17 -pthread -I"$here")
g++ "${flags[@]}" "$here/civetweb_server.cc" -lcivetweb -o "$out/civetweb"
g++ "${flags[@]}" "$here/httplib_server.cc" -lcpp-httplib -o "$out/httplib"
g++ "${flags[@]}" "$here/beast_server.cc" -o "$out/beast"
g++ "${flags[@]}" "$here/evhttp_server.cc" -levent -o "$out/evhttp"
g++ "${flags[@]}" "$here/microhttpd_server.cc" -lmicrohttpd -o "$out/microhttpd"

for_each_library() {
  local measure=$1 name port pid
  local -a servers=(
    "civetweb 18080 $out/civetweb 127.0.0.1:18080"
    "cpp-httplib 18081 $out/httplib 18081"
    "beast 18082 $out/beast 18082 2"
    "evhttp 18083 $out/evhttp 18083"
    "microhttpd 18084 $out/microhttpd 18084")
  for server in "${servers[@]}"; do
    read -r name port command <<<"$server"
    # shellcheck disable=SC2086  # the command and its arguments, split
    $command 2>"$out/$name.log" &
    pid=$!
    sleep 0.5
    "$measure" "$name" "$port" "$pid"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  done
}
