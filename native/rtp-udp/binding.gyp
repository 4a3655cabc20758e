{
  "targets": [
    {
      "target_name": "rtp_udp",
      "sources": ["rtp_udp.c"],
      "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
