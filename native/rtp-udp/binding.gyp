{
  "targets": [
    {
      "target_name": "rtp_udp",
      "sources": ["rtp_udp.c", "rtp_inbound.c", "inbound_napi.c", "fast_drain.c", "srtp_transform.c", "srtp_napi.c"],
      "cflags": ["-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
