{
  "targets": [
    {
      "target_name": "spectral_denoise",
      "sources": ["spectral.c"],
      "cflags": ["-O3", "-fno-math-errno", "-ffp-contract=off", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
