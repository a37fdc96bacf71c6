package io.livenesslab.service;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Arrays;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * A bean of some modes only: {@code demo.mode} read as {@link DemoProperties} reads it (case-insensitive,
 * the mode's label), so that, e.g., servlet-async gets its own controller.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.TYPE, ElementType.METHOD })
@Documented
@Conditional(ConditionalOnMode.OnModeCondition.class)
@interface ConditionalOnMode {

	/** The modes the bean belongs to. */
	Mode[] value();

	class OnModeCondition extends SpringBootCondition {

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			String name = Binder.get(context.getEnvironment()).bind("demo.mode", String.class).orElse(Mode.DEFAULT);
			Mode mode;
			try {
				mode = Mode.parse(name);
			}
			catch (IllegalArgumentException ex) {
				// DemoProperties refuses it, with the valid modes, when the context binds it.
				return ConditionOutcome.noMatch("unknown mode '" + name + "'");
			}
			Mode[] modes = (Mode[]) metadata.getAnnotationAttributes(ConditionalOnMode.class.getName()).get("value");
			return Arrays.asList(modes).contains(mode) ? ConditionOutcome.match("mode " + mode.label())
					: ConditionOutcome.noMatch("mode " + mode.label() + ", not " + Arrays.toString(modes));
		}

	}

}
