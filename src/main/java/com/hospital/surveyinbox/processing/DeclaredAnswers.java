package com.hospital.surveyinbox.processing;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.camel.CamelContext;
import org.apache.camel.model.Model;
import org.apache.camel.model.ProcessorDefinition;
import org.apache.camel.model.ProcessorDefinitionHelper;
import org.apache.camel.model.RouteDefinition;
import org.apache.camel.model.SetPropertyDefinition;
import org.apache.camel.model.ToDefinition;
import org.apache.camel.model.ToDynamicDefinition;
import org.apache.camel.model.language.ExpressionDefinition;

/**
 * The answers routes declare before their HTTP calls ({@link DownstreamCalls#ANSWER_IS}, {@link DownstreamCalls#ANSWER_NAMES},
 * {@link DownstreamCalls#CREATED_NAMES}), checked once every route is built, so an edit of {@code routes/} that gets one
 * wrong fails the start instead of the rows: an unknown {@code answerIs} failed every call it declared (each row charged
 * to DEAD with a reply, the cause a bare "unexpected IllegalArgumentException"), and a misspelt name, a value that is
 * not a constant or a declaration that is not right before its call turned the check off without a word.
 */
public final class DeclaredAnswers {

    static final Set<String> NAMES = Set.of(DownstreamCalls.ANSWER_IS, DownstreamCalls.ANSWER_NAMES, DownstreamCalls.CREATED_NAMES);

    private DeclaredAnswers() {
    }

    /** Fails (IllegalStateException naming the route and step) on the first declaration that is not right. */
    public static void check(CamelContext context) {
        Model model = context.getCamelContextExtension().getContextPlugin(Model.class);
        for (RouteDefinition route : model.getRouteDefinitions()) {
            for (SetPropertyDefinition set : ProcessorDefinitionHelper.filterTypeInOutputs(route.getOutputs(), SetPropertyDefinition.class)) {
                String name = set.getName();
                if (name == null || !name.toLowerCase(Locale.ROOT).contains("answer")) {
                    continue;
                }
                String where = "route " + route.getRouteId() + ", setProperty " + (set.hasCustomIdAssigned() ? set.getId() : name) + ": ";
                if (!NAMES.contains(name)) {
                    throw new IllegalStateException(where + "no declared answer is named '" + name + "' (one of " + NAMES + ")");
                }
                ExpressionDefinition value = set.getExpression();
                if (value == null || !"constant".equals(value.getLanguage())) {
                    throw new IllegalStateException(where + name + " must be a constant");
                }
                if (DownstreamCalls.ANSWER_IS.equals(name) && !DownstreamCalls.SHAPES.contains(value.getExpression())) {
                    throw new IllegalStateException(where + "answerIs must be one of " + DownstreamCalls.SHAPES + ", not '"
                            + value.getExpression() + "'");
                }
                List<ProcessorDefinition<?>> siblings = set.getParent() == null ? route.getOutputs() : set.getParent().getOutputs();
                int next = siblings.indexOf(set) + 1;
                while (next < siblings.size() && siblings.get(next) instanceof SetPropertyDefinition other && NAMES.contains(other.getName())) {
                    next++;
                }
                if (next >= siblings.size() || !(siblings.get(next) instanceof ToDynamicDefinition || siblings.get(next) instanceof ToDefinition)) {
                    throw new IllegalStateException(where + name + " must come right before the HTTP call it declares (a to or toD)");
                }
            }
        }
    }
}
