"""Where a session's time and money went, as pages and twins say it: amounts and price sources (`cost`), the
timeline's spans and the header's durations (`timeline`), the session list's totals (`overview`)."""
