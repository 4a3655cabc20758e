{
  "targets": [
    {
      "target_name": "dsp",
      "sources": ["dsp.c", "spectral.c"],
      "cflags": ["-O3", "-fno-math-errno", "-ffp-contract=off", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    }
  ]
}
