#include "modelcatalog.h"

#include "config.h"

#include <QJsonObject>

namespace parrot {

const std::vector<CatalogEntry>& modelFamilies()
{
    static const QStringList common = {"layers", "d_model", "tie_embeddings"};
    static const QStringList ssm = {"d_state", "d_conv", "expand"};
    static const std::vector<CatalogEntry> families = {
        {"transformer", "Transformer",
         "Decoder-only, pre-LayerNorm Transformer; its positional scheme is chosen by model.positions.",
         common + QStringList{"positions", "heads", "num_masked_heads", "mlp_ratio", "rotary_fraction", "max_positions",
                                     "parallel_residual", "layer_norm_eps", "rotary_base", "repeat_pass_dims"}},
        {"mamba", "Mamba", "Mamba blocks (selective state space, fused scan): a fixed-size state, the copy paper's GSSM.",
         common + ssm + QStringList{"mamba_mlp_ratio"}},
        {"lstm", "LSTM", "An LSTM language model, the copy paper's recurrent baseline: a state of 2 x hidden x layers.", common},
        {"s4d", "S4D", "Diagonal, time-invariant state space layers (S4D-real) with GELU and projections.",
         common + QStringList{"d_state", "expand"}},
        {"s4_mamba", "S4-Mamba", "The Mamba block with a time-invariant S4D kernel in place of the selective scan (Park et al.).",
         common + ssm + QStringList{"mamba_mlp_ratio"}},
        {"hybrid", "Hybrid", "Attention and Mamba blocks alternating, learned absolute positions (Park et al., standard hybrid).",
         common + ssm + QStringList{"heads", "max_positions"}},
        {"mambaformer", "MambaFormer",
         "One Mamba block first, then attention and Mamba alternating, no positional encoding (Park et al.).",
         common + ssm + QStringList{"heads"}},
    };
    return families;
}

const std::vector<CatalogEntry>& positionSchemes()
{
    static const std::vector<CatalogEntry> schemes = {
        {"hard_alibi", "Hard-ALiBi", "Copy paper: head i < masked heads sees only the last i+1 tokens; the others see everything before.", {}},
        {"nope", "NoPE (causal mask only)", "No positional information beyond the causal mask.", {}},
        {"learned", "Learned absolute", "GPT-2 style position embeddings added to the tokens; limited to max_positions.", {}},
        {"rope", "RoPE", "Rotary embeddings (GPT-NeoX style) on a fraction of each head's dimensions (rotary_fraction).", {}},
        {"alibi", "ALiBi", "Linear distance penalties with slopes 2^(-8h/H), h = 1..H.", {}},
    };
    return schemes;
}

QJsonArray modelCatalogJson()
{
    const QJsonObject defaults = toJson(ExperimentConfig{})["model"].toObject();
    QJsonArray out;
    for (const CatalogEntry& f : modelFamilies()) {
        QJsonObject options;
        for (const QString& key : f.options) options.insert(key, defaults.value(key));
        QJsonObject entry{{"kind", f.id}, {"name", f.label}, {"description", f.tip}, {"options", options}};
        if (f.id == "transformer") {
            QJsonArray positions;
            for (const CatalogEntry& p : positionSchemes())
                positions.append(QJsonObject{{"positions", p.id}, {"name", p.label}, {"description", p.tip}});
            entry.insert("positions", positions);
        }
        out.append(entry);
    }
    return out;
}

}  // namespace parrot
