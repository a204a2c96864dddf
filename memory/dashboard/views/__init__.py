"""Dashboard views: one module per page (or group of pages), fragments as partials."""
