package io.livenesslab.service;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * The latency model of one request: a fixed latency, a uniform range, or a weighted mix such as
 * {@code 1000:80,4000:20} (80 % take 1 s, 20 % take 4 s). Parsed from request parameters with
 * every rule checked, so that bad input is a 400 naming the parameter, never a 500.
 */
sealed interface Latency {

	/** The latency of this request. */
	Duration next();

	record Fixed(long ms) implements Latency {
		public Duration next() {
			return Duration.ofMillis(this.ms);
		}
	}

	record Uniform(long minMs, long maxMs) implements Latency {
		public Duration next() {
			return Duration.ofMillis(ThreadLocalRandom.current().nextLong(this.minMs, this.maxMs + 1));
		}
	}

	record Mix(List<Share> shares) implements Latency {
		public Duration next() {
			int pick = ThreadLocalRandom.current().nextInt(100);
			for (Share share : this.shares) {
				pick -= share.percent();
				if (pick < 0) {
					return Duration.ofMillis(share.ms());
				}
			}
			throw new IllegalStateException("mix percentages do not add up to 100: " + this.shares);
		}
	}

	record Share(long ms, int percent) {
	}

	/**
	 * Reads the latency parameters of {@code /api/work}. At most one of {@code latencyMs},
	 * {@code minMs}+{@code maxMs} and {@code mix} may be given; none means the configured default.
	 */
	static Latency parse(String latencyMs, String minMs, String maxMs, String mix, long defaultMs, long capMs) {
		int given = (latencyMs != null ? 1 : 0) + (minMs != null || maxMs != null ? 1 : 0) + (mix != null ? 1 : 0);
		if (given > 1) {
			String which = latencyMs != null ? "latencyMs" : "minMs";
			throw new BadParameterException(which, "give only one of latencyMs, minMs and maxMs, or mix");
		}
		if (latencyMs != null) {
			return new Fixed(millis("latencyMs", latencyMs, capMs));
		}
		if (minMs != null || maxMs != null) {
			if (minMs == null || maxMs == null) {
				throw new BadParameterException(minMs == null ? "minMs" : "maxMs", "minMs and maxMs go together");
			}
			long min = millis("minMs", minMs, capMs);
			long max = millis("maxMs", maxMs, capMs);
			if (min > max) {
				throw new BadParameterException("minMs", "minMs (" + min + ") must not be greater than maxMs (" + max + ")");
			}
			return new Uniform(min, max);
		}
		if (mix != null) {
			return parseMix(mix, capMs);
		}
		return new Fixed(defaultMs);
	}

	private static Mix parseMix(String mix, long capMs) {
		String format = "must be comma-separated latencyMs:percent pairs adding up to 100, e.g. 1000:80,4000:20";
		if (mix.isBlank()) {
			throw new BadParameterException("mix", "mix " + format);
		}
		List<Share> shares = new ArrayList<>();
		int total = 0;
		for (String part : mix.split(",", -1)) {
			String[] pair = part.strip().split(":", -1);
			if (pair.length != 2) {
				throw new BadParameterException("mix", "mix entry '" + part + "' " + format);
			}
			long ms = millis("mix", pair[0], capMs);
			int percent;
			try {
				percent = Integer.parseInt(pair[1].strip());
			}
			catch (NumberFormatException ex) {
				throw new BadParameterException("mix", "mix percent '" + pair[1] + "' must be a whole number from 1 to 100");
			}
			if (percent < 1 || percent > 100) {
				throw new BadParameterException("mix", "mix percent " + percent + " must be a whole number from 1 to 100");
			}
			total += percent;
			shares.add(new Share(ms, percent));
		}
		if (total != 100) {
			throw new BadParameterException("mix", "mix percentages add up to " + total + ", not 100");
		}
		return new Mix(List.copyOf(shares));
	}

	/** A latency parameter: a whole number of milliseconds from 0 to the cap. */
	private static long millis(String parameter, String value, long capMs) {
		String text = value.strip();
		if (text.isEmpty()) {
			throw new BadParameterException(parameter, parameter + " must not be empty");
		}
		if (!WholeNumber.PATTERN.matcher(text).matches()) {
			throw new BadParameterException(parameter,
					parameter + " '" + value + "' must be a whole number of milliseconds");
		}
		long ms;
		try {
			ms = Long.parseLong(text);
		}
		catch (NumberFormatException ex) {
			throw new BadParameterException(parameter, parameter + " '" + value + "' is too large: at most " + capMs);
		}
		if (ms < 0) {
			throw new BadParameterException(parameter, parameter + " must not be negative, got " + ms);
		}
		if (ms > capMs) {
			throw new BadParameterException(parameter,
					parameter + " " + ms + " is over the cap of " + capMs + " ms (demo.latency-max-ms)");
		}
		return ms;
	}

	/** Compiled once: a request's parameters are checked on the event loop. */
	final class WholeNumber {

		static final Pattern PATTERN = Pattern.compile("-?[0-9]+");

		private WholeNumber() {
		}

	}

}
