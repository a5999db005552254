# %% [markdown]
# # own_rule

# %%
print(1 + 1)
