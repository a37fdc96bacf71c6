package io.livenesslab.service;

/** A request parameter broke a rule: answered 400 problem+json naming the parameter and the rule. */
class BadParameterException extends RuntimeException {

	private final String parameter;

	BadParameterException(String parameter, String rule) {
		super(rule);
		this.parameter = parameter;
	}

	String parameter() {
		return this.parameter;
	}

}
