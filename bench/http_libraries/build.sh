# Sourced by run.sh and crowd.sh: builds the five candidate servers into
# $out (set by the caller) from the prototypes beside this file.
flags=(-O2 -std=c++17 -pthread -I"$here")
g++ "${flags[@]}" "$here/civetweb_server.cc" -lcivetweb -o "$out/civetweb"
g++ "${flags[@]}" "$here/httplib_server.cc" -lcpp-httplib -o "$out/httplib"
g++ "${flags[@]}" "$here/beast_server.cc" -o "$out/beast"
g++ "${flags[@]}" "$here/evhttp_server.cc" -levent -o "$out/evhttp"
g++ "${flags[@]}" "$here/microhttpd_server.cc" -lmicrohttpd -o "$out/microhttpd"
