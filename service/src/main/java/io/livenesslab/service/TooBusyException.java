package io.livenesslab.service;

/**
 * Load shedding ({@code demo.max-in-flight}): the request would exceed the cap on requests in flight, so
 * it is answered 429 problem+json at once instead of queueing behind the others.
 */
class TooBusyException extends RuntimeException {

	private final int maxInFlight;

	TooBusyException(int maxInFlight) {
		super(maxInFlight + " requests are in flight, the most this pod takes (demo.max-in-flight); try again later");
		this.maxInFlight = maxInFlight;
	}

	int maxInFlight() {
		return this.maxInFlight;
	}

}
