"""acme_tide: ships the acme_ops Tide plugin in acme_tide/plugins/ (found by its entry point;
`import tide` never imports this module)."""
